/**
 * Claiming keys: one round trip for the batch, plus one more only when some key is held by a dead
 * process on this host. Such a holder will never renew or settle its claim, so instead of waiting
 * out its lease the claim is released under the dead holder's own token (fenced: if anyone else
 * took it meanwhile, the release does nothing) and claimed again, which counts as a takeover.
 * Such a result carries `deadSeenAt`: the dead holder's last sign of life on the ledger's clock
 * (its last claim or renewal), after which a request it sent may still reach the CRM.
 */
import type { ClaimRequest, ClaimResult, LedgerBackend } from '../ledger/types.js';
import { extend } from '../extend.js';
import { isDeadLocalOwner, ownerId } from '../owner.js';

export type KeyClaim = ClaimResult & { readonly deadSeenAt?: number };

export async function claimKeys(ledger: LedgerBackend, requests: readonly ClaimRequest[], now: number): Promise<KeyClaim[]> {
  if (requests.length === 0) return [];
  const owner = ownerId();
  const owned = requests.map((r) => (r.owner === undefined ? extend(r, { owner }) : r));
  const results: KeyClaim[] = await ledger.claim(owned, now);
  const dead = results.flatMap((r, i) => (r.outcome === 'in_progress' && isDeadLocalOwner(r.entry.owner) ? [i] : []));
  if (dead.length === 0) return results;
  await ledger.release(dead.map((i) => ({ key: results[i]!.key, token: results[i]!.entry.token })), now);
  const again = await ledger.claim(dead.map((i) => owned[i]!), now);
  dead.forEach((i, j) => (results[i] = again[j]!.outcome === 'claimed' ? extend(again[j]!, { deadSeenAt: results[i]!.entry.updatedAt }) : again[j]!));
  return results;
}
