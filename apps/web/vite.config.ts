import path from 'node:path';
import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The API server (npm run dev -w @herald/server) listens on PORT (3000 by
// default); the dev server forwards the API, the SDK bundle and uploaded images
// to it so the dashboard runs on one origin, exactly as in production.
const apiServer = `http://localhost:${process.env.PORT ?? 3000}`;

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react(), tailwindcss()],
  server: {
    proxy: {
      '/api': apiServer,
      '/sdk': apiServer,
      '/uploads': apiServer,
    },
  },
  build: {
    outDir: path.join(import.meta.dirname, 'dist'),
    emptyOutDir: true,
  },
});
