/**
 * The two work areas of a one-call codec module (build/deflate.wasm, build/keep.wasm): the host copies its input
 * into one (inputPtr), makes one call, and reads the result from the other (outputPtr). The module's prepare()
 * allocates both with the stub runtime's heap and records them here.
 */

let inArea: usize = 0;
let outArea: usize = 0;
let prepared: usize = 0;

/** Records the areas prepare() allocated for inputs of up to `capacity` bytes. */
export function setAreas(capacity: usize, input: usize, output: usize): void {
  prepared = capacity;
  inArea = input;
  outArea = output;
}

/** Bytes of input the areas were prepared for (0: not prepared yet). */
export function preparedCapacity(): usize {
  return prepared;
}

/** Where the host puts the input (the prepared capacity, plus the module's slack). */
export function inputPtr(): usize {
  return inArea;
}

/** Where the module writes its output for the host to read. */
export function outputPtr(): usize {
  return outArea;
}
