import { seededRandom } from '../../adapters/testing/fake-http.js';

/** Event indexes 0..events-1, each delivered 1 to `maxCopies` times, in a seeded shuffled order. */
export function shuffledDeliveries(seed: number, events: number, maxCopies = 3): number[] {
  const random = seededRandom(seed);
  const copies: number[] = [];
  for (let e = 0; e < events; e++) for (let c = 1 + Math.floor(random() * maxCopies); c > 0; c--) copies.push(e);
  for (let i = copies.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copies[i], copies[j]] = [copies[j]!, copies[i]!];
  }
  return copies;
}
