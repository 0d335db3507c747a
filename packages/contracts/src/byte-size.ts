// A size in bytes as a person reads it, with binary units (1 KB = 1,024 bytes,
// as the upload quota and the byte caps count): the same words in the
// server's messages ("Feed is larger than 5 MB") and on the dashboard (an
// upload's size, the storage used).

const KB = 1024;
const MB = 1024 * KB;

/** "800 bytes", "12 KB", "12.3 KB", "1.5 MB", "200 MB": exact below 1 KB, then one decimal at most (none when it is 0). */
export function formatBytes(bytes: number): string {
  if (bytes >= MB) return `${Number((bytes / MB).toFixed(1))} MB`;
  if (bytes >= KB) return `${Number((bytes / KB).toFixed(1))} KB`;
  return bytes === 1 ? '1 byte' : `${bytes} bytes`;
}
