// The credential table against a real store on each backend (a temp data directory, a PostgreSQL
// database): what is kept, what survives a restart, and each decision the master makes on a
// connection.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { storeBackends, type OpenBackend } from '@runner/plugin-store/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { AgentIdentities, type Refusal } from './identities.js';
import { recordingLogger } from './test-support.js';

const ok = () => 'ok' as const;

for (const backend of storeBackends('identities')) {
  describe.skipIf(!backend.available)(`agent identities on ${backend.name}`, () => {
    const stores: OpenBackend[] = [];
    afterEach(async () => {
      for (const opened of stores.splice(0)) await opened.close();
    });
    afterAll(() => backend.cleanup());

    /** The identities over a new store, or over `again` reopened (a restart). */
    async function open(
      again?: OpenBackend,
    ): Promise<{ opened: OpenBackend; store: OpenBackend['store']; identities: AgentIdentities }> {
      const opened = again === undefined ? await backend.open() : await again.reopen();
      stores.push(opened);
      const identities = new AgentIdentities(recordingLogger([]), opened.store);
      await identities.open();
      return { opened, store: opened.store, identities };
    }

    it('refuses reserved names and names equal to an enrolled one after case folding or a trailing dot', async () => {
      const { identities } = await open();
      for (const name of ['localhost', 'LocalHost', 'localhost.', 'master', 'MASTER', 'all', 'All.']) {
        expect(identities.admit(name, 'join-token'), name).toMatchObject({
          refused: 'INVALID_ARGUMENT',
          why: expect.stringContaining('is reserved'),
        });
      }
      expect(identities.admit('web-1', 'join-token')).toHaveProperty('credential');
      for (const name of ['Web-1', 'WEB-1', 'web-1.', 'web-1..']) {
        expect(identities.admit(name, 'join-token'), name).toEqual({
          refused: 'ALREADY_EXISTS',
          why: `agent name ${JSON.stringify(name)} differs from the enrolled agent "web-1" only by case or a trailing dot; start this agent under another name`,
        });
      }
      expect(identities.admit('web-2', 'join-token')).toHaveProperty('credential');
    });

    it('enrols a new name with the join token, keeping only the SHA-256 of the credential, durably', async () => {
      const first = await open();
      expect(first.identities.authenticate('web-1', undefined, ok)).toBe('join-token');
      const admitted = first.identities.admit('web-1', 'join-token');
      const credential = (admitted as { credential: string }).credential;
      expect(credential).toMatch(/^rac_[A-Za-z0-9_-]{43}$/);
      await first.identities.close();
      const rows = await first.store.all<Record<string, unknown>>('SELECT * FROM agent_credentials');
      expect(rows).toEqual([
        {
          name: 'web-1',
          hash: createHash('sha256').update(credential).digest('hex'),
          issued_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          revoked_at: null,
        },
      ]);
      await stores.splice(0)[0]?.close();
      // Nothing on disk holds the credential itself (on PostgreSQL, the table above is all there is).
      const dir = first.opened.dataDir;
      for (const file of dir === undefined ? [] : (readdirSync(dir, { recursive: true }) as string[])) {
        const path = join(dir as string, file);
        if (statSync(path).isFile()) expect(readFileSync(path).includes(credential)).toBe(false);
      }

      // After a restart the credential still proves the name, whatever the join token says now.
      const second = await open(first.opened);
      expect(second.identities.authenticate('web-1', credential, () => 'wrong')).toBe('credential');
      expect(second.identities.admit('web-1', 'credential', '127.0.0.1:1')).toEqual({});
      expect(second.identities.summary('web-1')).toEqual({ enrolled_at: rows[0].issued_at, revoked_at: null });
    });

    it('the join token cannot take an enrolled name, live or not; a wrong credential is refused', async () => {
      const { identities } = await open();
      identities.admit('db', 'join-token');
      expect(identities.admit('db', 'join-token', '10.0.0.7:4000')).toEqual({
        refused: 'ALREADY_EXISTS',
        why: expect.stringMatching(/agent db is connected \(from 10\.0\.0\.7:4000\).*another name/),
      });
      expect((identities.admit('db', 'join-token') as Refusal).why).toMatch(
        /agent db is enrolled .*runner agent remove db/,
      );
      expect(identities.authenticate('db', 'rac_forged', ok)).toMatchObject({
        refused: 'UNAUTHENTICATED',
        why: expect.stringMatching(/not the one this master issued/),
      });
      // No credential and no token: the token's own message.
      expect(identities.authenticate('db', undefined, () => 'missing')).toMatchObject({
        refused: 'UNAUTHENTICATED',
        why: expect.stringMatching(/no join token presented/),
      });
    });

    it('revoking blocks the credential and the join token; forgetting frees the name for the join token', async () => {
      const first = await open();
      const { credential } = first.identities.admit('edge', 'join-token') as { credential: string };
      const revoked = await first.identities.revoke('edge');
      expect(revoked.revoked_at).toMatch(/^\d{4}-/);
      // Revoking again keeps the first time.
      expect((await first.identities.revoke('edge')).revoked_at).toBe(revoked.revoked_at);
      const refusal = {
        refused: 'PERMISSION_DENIED',
        why: expect.stringMatching(/revoked .*runner agent remove edge/),
      };
      expect(first.identities.authenticate('edge', credential, ok)).toMatchObject(refusal);
      expect(first.identities.admit('edge', 'join-token')).toMatchObject(refusal);
      // A name that never had a credential can be blocked too.
      await first.identities.revoke('never');
      expect(first.identities.admit('never', 'join-token')).toMatchObject({ refused: 'PERMISSION_DENIED' });
      expect(first.identities.summary('never')).toEqual({ enrolled_at: null, revoked_at: expect.any(String) });

      // Revocation survives a restart; forgetting is the way back.
      await stores.splice(0)[0]?.close();
      const second = await open(first.opened);
      expect(second.identities.authenticate('edge', credential, ok)).toMatchObject(refusal);
      await second.identities.forget('edge');
      expect(await second.store.all('SELECT name FROM agent_credentials')).toEqual([{ name: 'never' }]);
      // The old credential is unknown now: the join token decides, and enrols the name afresh.
      expect(second.identities.authenticate('edge', credential, ok)).toBe('join-token');
      expect(second.identities.admit('edge', 'join-token')).toEqual({ credential: expect.stringMatching(/^rac_/) });
    });
  });
}
