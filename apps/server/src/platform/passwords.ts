import { hash, verify } from '@node-rs/argon2';

// Security guide: argon2id with m ≥ 19 MiB, t ≥ 2, p = 1; compared exactly as
// typed (argon2 has no 72-byte truncation, unlike bcrypt).
/** Algorithm 2 is Argon2id in @node-rs/argon2's (const) enum. */
const options = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, options);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

// Verifying against this when the account does not exist keeps a failed login
// for an unknown email as slow as one for a known email (no account enumeration).
let dummyHash: Promise<string> | undefined;
export async function burnPasswordCheck(password: string): Promise<void> {
  dummyHash ??= hashPassword('herald-timing-equaliser');
  await verifyPassword(await dummyHash, password);
}
