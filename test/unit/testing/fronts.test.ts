import { describe, expect, it } from 'vitest';
import { fakeHubSpot, fakeSalesforce, type FakeCrmBase } from '../../../adapters/testing/index.js';

const fakes: [string, () => FakeCrmBase<string>][] = [
  ['fakeHubSpot', () => fakeHubSpot()],
  ['fakeSalesforce', () => fakeSalesforce()],
];

describe('fake CRM fronts', () => {
  it.each(fakes)('%s open("loopback") serves { url, close } and stops answering after close', async (_name, make) => {
    const fake = make();
    const front = await fake.open('loopback');
    expect(front.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(front.stop).toBe(front.close);
    await fetch(`${front.url}/ping`).then((r) => r.text());
    expect(fake.count()).toBe(1);
    await front.close();
    await expect(fetch(`${front.url}/ping`)).rejects.toThrow();
  });

  it.each(fakes)('%s open("nock") serves the origin with the same shape', async (_name, make) => {
    const fake = make();
    const origin = `https://fronts-${Math.random().toString(36).slice(2)}.test`;
    const front = await fake.open('nock', `${origin}/`);
    expect(front.url).toBe(origin);
    await fetch(`${front.url}/ping`).then((r) => r.text());
    expect(fake.count()).toBe(1);
    await front.close();
  });
});
