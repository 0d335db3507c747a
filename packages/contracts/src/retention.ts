// How long a send's per-subscriber delivery rows are kept (docs/storage.md,
// "Retention"), shared by the server's settings and the help that explains it.

/** DELIVERY_RETENTION_DAYS when not set. */
export const DELIVERY_RETENTION_DEFAULT_DAYS = 30;
/** At least a week: the frequency cap counts a subscriber's pushes up to 168 hours back from the rows. */
export const DELIVERY_RETENTION_MIN_DAYS = 7;
/** The CSV report's last columns: how many deliveries a line stands for, and how many of them had each beacon. */
export const REPORT_COUNT_COLUMNS = ['deliveries', 'delivered', 'clicked'] as const;
