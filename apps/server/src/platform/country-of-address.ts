import { createRequire } from 'node:module';
import { normalizeAddress } from './client-address';

/** The part of geoip-country's API Herald uses. */
interface CountryDatabase {
  lookup(ip: string): { country: string } | null;
}

// geoip-country ships MaxMind's GeoLite2 country ranges inside the npm
// package: an offline lookup, no network, about 20 MB of memory and 20 ms to
// load (geoip-lite would load ~110 MB of city data we do not need). Loaded on
// first use, so process roles that never see a subscriber do not pay for it.
let database: CountryDatabase | undefined;

function countryDatabase(): CountryDatabase {
  database ??= createRequire(import.meta.url)('geoip-country') as CountryDatabase;
  return database;
}

/**
 * The ISO 3166-1 alpha-2 country of an IP address, or undefined when it is
 * not a public address the database knows (loopback, private ranges,
 * unallocated space).
 */
export function countryOfAddress(address: string): string | undefined {
  const ip = normalizeAddress(address);
  const found = countryDatabase().lookup(ip);
  const code = found?.country;
  return code && /^[A-Z]{2}$/.test(code) ? code : undefined;
}
