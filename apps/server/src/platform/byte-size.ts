// formatBytes lives in @herald/contracts (shared with the dashboard). This
// re-export keeps platform/outbound-http.ts's import working; once that file
// imports it from @herald/contracts, this file can go.
export { formatBytes } from '@herald/contracts';
