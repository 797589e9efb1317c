// Vite configuration of the console: fixed asset names (the binary embeds exactly these files,
// crates/earshot-api/src/console.rs), served under /console/, no source maps, no inlined assets.
import { defineConfig } from "vite";

export default defineConfig({
  base: "/console/",
  build: {
    outDir: process.env.CONSOLE_OUT_DIR || "dist",
    emptyOutDir: true,
    sourcemap: false,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    cssCodeSplit: false,
    rollupOptions: {
      output: {
        entryFileNames: "assets/console.js",
        chunkFileNames: "assets/console-[name].js",
        assetFileNames: "assets/console[extname]",
        inlineDynamicImports: true,
      },
    },
  },
});
