// Bundles the extension (and vscode-languageclient) into one file: the .vsix then needs no node_modules.
import * as esbuild from "esbuild";

const production = process.argv.includes("--production");
await esbuild.build({
  entryPoints: ["src/extension.ts"],
  bundle: true,
  outfile: "dist/extension.js",
  external: ["vscode"],
  format: "cjs",
  platform: "node",
  target: "node20",
  sourcemap: !production,
  sourcesContent: false,
  minify: production,
  logLevel: "warning",
});
