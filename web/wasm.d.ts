/** esbuild's `file` loader: importing a .wasm gives the URL of the emitted file, relative to the bundle. */
declare module "*.wasm" {
  const url: string;
  export default url;
}
