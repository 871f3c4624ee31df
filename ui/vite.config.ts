import { sveltekit } from '@sveltejs/kit/vite';
import { defineConfig } from 'vite';

// `npm run dev -w ui` proxies the API to a master started with `runner ui --port 8080`.
export default defineConfig({
  plugins: [sveltekit()],
  server: {
    proxy: { '/api': { target: process.env.RUNNER_UI_API ?? 'http://127.0.0.1:8080', ws: true } },
  },
  build: { reportCompressedSize: false },
});
