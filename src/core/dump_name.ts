/**
 * The name traces show for a dump file (Chrome JSON traceName, FileInfo.file, merge's rank labels, the viewer's
 * header): the file's own name, a compressed dump's `x.rawtrace.gz` as `x.rawtrace`, so that both give the same
 * output. No path handling here (the browser has none): `fileName` is a base name.
 */
export function dumpFileName(fileName: string): string {
  return fileName.replace(/\.rawtrace\.gz$/i, ".rawtrace");
}
