/**
 * `crm-upsert mcp` over stdio, spawned by the SDK's StdioClientTransport as Claude Desktop or any
 * MCP host spawns it: a fake HubSpot on loopback, a SQLite ledger file. Includes the server killed
 * (SIGKILL) in the middle of a create and started again, the client retrying with the same key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeHubSpot } from '../../adapters/testing/index.js';
import { runCli, startFakeHubSpot, tempDir, waitFor, writeHubSpotConfig } from '../cli/helpers.js';
import { badArguments, call, contactFor, expectGeneratedTools, hubspotReads, keylessNoteThrice, notesWith, noteThriceWithOneKey, TIMESTAMP, upsertTwiceWithOneKey } from './helpers.js';
import { CRM_TOKEN, stdioServer, type StdioServer } from './spawn.js';

let fake: FakeHubSpot;
let server: { basePath: string; close(): Promise<void> };
let config: string;
let main: StdioServer;

beforeAll(async () => {
  ({ fake, server } = await startFakeHubSpot());
  config = writeHubSpotConfig(tempDir('crm-upsert-mcp-stdio-'), server.basePath, { leaseMs: 5_000 });
  main = await stdioServer(config, 'stdio-agent');
});

afterAll(async () => {
  await main.client.close();
  await server.close();
});

describe('crm-upsert mcp over stdio', () => {
  it('serves the generated tools, with diagnostics on stderr only', async () => {
    await expectGeneratedTools(main.client, hubspotReads());
    expect(main.stderr()).toContain('crm-upsert mcp: serving over stdio (tools upsert_contact, create_note, describe_contact, get_contact, describe_note, get_outcome; crm hubspot, ledger sqlite:');
  });

  it('replays an upsert repeated with the same key', async () => {
    await upsertTwiceWithOneKey(main.client, fake, 'stdio-upsert');
  });

  it('creates one note for three calls with one key and different text', async () => {
    await noteThriceWithOneKey(main.client, fake, 'stdio-note');
  });

  it('suppresses identical keyless creates inside the window', async () => {
    await keylessNoteThrice(main.client, fake, 'stdio-keyless');
  });

  it('rejects bad arguments with their path and makes 0 CRM calls', async () => {
    await badArguments(main.client, fake, 'stdio-bad');
  });

  it('exits 0 when the client closes stdin, having written nothing but protocol to stdout', async () => {
    const ended = await runCli(['mcp', '--config', config], { input: '', env: { HUBSPOT_ACCESS_TOKEN: CRM_TOKEN } });
    expect(ended).toMatchObject({ code: 0, stdout: '' });
    expect(ended.stderr).toContain('crm-upsert mcp: serving over stdio');
  });

  describe('killed mid-call and started again', () => {
    const prefix = (tag: string) => `stdio-kill-${tag}`;

    async function killDuringCreate(tag: string, before: () => void): Promise<{ parent: string; args: Record<string, unknown> }> {
      const first = await stdioServer(config, 'crash-agent');
      const parent = await contactFor(first.client, prefix(tag));
      const args = { target: { object: 'contact', externalId: parent }, fields: { hs_note_body: `${prefix(tag)} first model output`, hs_timestamp: TIMESTAMP }, idempotencyKey: `${prefix(tag)}-key` };
      const creates = fake.count('notes/batch/create');
      before();
      const pending = call(first.client, 'create_note', args).then(() => 'answered', () => 'connection lost');
      await waitFor(() => fake.count('notes/batch/create') > creates, 20_000);
      process.kill(first.transport.pid!, 'SIGKILL');
      expect(await pending).toBe('connection lost');
      return { parent, args };
    }

    it('finds the note the CRM committed after the kill instead of creating a second one', async () => {
      const { args } = await killDuringCreate('committed', () => fake.setFaults({ latencyMs: 800 }));
      // The CRM finishes the request the dead server sent.
      await waitFor(() => notesWith(fake, prefix('committed')).length === 1, 10_000);
      fake.setFaults({});
      const again = await stdioServer(config, 'crash-agent');
      try {
        const retried = await call(again.client, 'create_note', { ...args, fields: { ...(args.fields as object), hs_note_body: `${prefix('committed')} second model output` } });
        const notes = notesWith(fake, prefix('committed'));
        expect(notes).toHaveLength(1);
        expect(retried.structured).toMatchObject({ status: 'created', recordId: notes[0]!.id });
        expect(notes[0]!.properties.hs_note_body).toBe(`${prefix('committed')} first model output`);
        expect((await call(again.client, 'create_note', args)).structured.status).toBe('replayed');
      } finally {
        await again.client.close();
      }
    });

    it('creates the note once when the request never reached the CRM', async () => {
      const { args } = await killDuringCreate('lost', () => {
        fake.setFaults({ latencyMs: 800 });
        fake.failNext('reset', { endpoint: 'notes/batch/create' });
      });
      await new Promise((r) => setTimeout(r, 900));
      fake.setFaults({});
      expect(notesWith(fake, prefix('lost'))).toHaveLength(0);
      const again = await stdioServer(config, 'crash-agent');
      try {
        const retried = await call(again.client, 'create_note', args);
        const notes = notesWith(fake, prefix('lost'));
        expect(notes).toHaveLength(1);
        expect(retried.structured).toMatchObject({ status: 'created', recordId: notes[0]!.id });
        expect((await call(again.client, 'get_outcome', { key: args.idempotencyKey })).structured).toMatchObject({ status: 'created', recordId: notes[0]!.id, attempts: 2 });
      } finally {
        await again.client.close();
      }
    });

    it('answers a keyless retry at once after the server was killed once the CRM committed the note, finding it instead of writing a second', async () => {
      const tag = prefix('keyless');
      // The CLI's own lease (60 s): what the retry must not wait out.
      const cliLease = writeHubSpotConfig(tempDir('crm-upsert-mcp-keyless-'), server.basePath);
      const first = await stdioServer(cliLease, 'keyless-agent');
      const parent = await contactFor(first.client, tag);
      const args = { target: { object: 'contact', externalId: parent }, fields: { hs_note_body: `${tag} first model output`, hs_timestamp: TIMESTAMP } };
      const dispatch = fake.core.dispatch.bind(fake.core);
      fake.core.dispatch = async (req) => {
        const answer = await dispatch(req);
        // Committed in the CRM; the server dies before the answer reaches it.
        if (req.path.endsWith('/notes/batch/create')) process.kill(first.transport.pid!, 'SIGKILL');
        return answer;
      };
      try {
        expect(await call(first.client, 'create_note', args).then(() => 'answered', () => 'connection lost')).toBe('connection lost');
      } finally {
        fake.core.dispatch = dispatch;
      }
      const notes = notesWith(fake, tag);
      expect(notes).toHaveLength(1);

      const again = await stdioServer(cliLease, 'keyless-agent');
      try {
        const before = fake.counts();
        const started = Date.now();
        const retried = await call(again.client, 'create_note', { ...args, fields: { ...args.fields, hs_note_body: `${tag} second model output` } });
        const took = Date.now() - started;
        expect(retried.structured).toMatchObject({ status: 'created', recordId: notes[0]!.id });
        expect(took).toBeLessThan(5_000);
        const sent = Object.entries(fake.counts()).flatMap(([endpoint, n]) => (n > (before[endpoint] ?? 0) ? [[endpoint, n - (before[endpoint] ?? 0)]] : []));
        // One lookup (the contact's notes, then their keys) and no create.
        expect(sent).toEqual([['POST /crm/v4/associations/contacts/notes/batch/read', 1], ['POST /crm/v3/objects/notes/batch/read', 1]]);
        expect(notesWith(fake, tag).map((n) => n.properties.hs_note_body)).toEqual([`${tag} first model output`]);
      } finally {
        await again.client.close();
      }
    });
  });
});
