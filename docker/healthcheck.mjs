// HEALTHCHECK of every Stoa image: GET /health on the app's port (PORT), healthy on 200. No curl in the images.
const port = process.env.PORT ?? '8000';
try {
  const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2500) });
  process.exit(res.ok ? 0 : 1);
} catch {
  process.exit(1);
}
