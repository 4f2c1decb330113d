/**
 * External correlation ids on a decoded event, shared by the decoders whose vendors record them as separate
 * EXTERNAL_CORRELATION records keyed by correlation id (CUPTI, PTI): the session's table (model/session.ts
 * lookupExternal) gives the framework-op id (CUSTOM_0, else UNKNOWN) and the user-annotation id (CUSTOM_1).
 */
import { Ev, EvFlag } from "../model/event";
import * as S from "../model/session";

/** Sets `e.externalId` / `e.userExternalId` and their flags from the external ids of correlation `corr`, when found. */
// @ts-ignore: decorator
@inline export function attachExternal(e: Ev, corr: u64): void {
  if (!S.extLookups) return; // none recorded, or the emitter never reads them (XSpace, statistics)
  S.lookupExternal(corr);
  if (S.extOpFound) {
    e.externalId = S.extOp;
    e.flags |= EvFlag.HAS_EXTERNAL;
  }
  if (S.extUserFound) {
    e.userExternalId = S.extUser;
    e.flags |= EvFlag.HAS_USER_EXTERNAL;
  }
}
