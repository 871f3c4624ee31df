import { ConflictError, type Logger, type Store, type StoreReader, type StoreTransaction } from '@runner/plugin-sdk';

/** The one state row (one repository per installation). */
export const STATE = 'repository';
/** A sync's claim lapses after this long, so a master that died in one does not block the next forever. */
export const CLAIM_MS = 10 * 60_000;

export interface StateRow {
  commit_id: string | null;
  commit_author: string | null;
  commit_message: string | null;
  applied_at: string | null;
  applied_by: string | null;
  sync_owner: string | null;
  sync_by: string | null;
  sync_started_at: string | null;
  sync_until: number | string | null;
}

/** A sync's claim: the master holding it and since when (the fence its writes check). */
export interface Claim {
  owner: string;
  startedAt: string;
}

/** The state row, through the store or a unit's tx. */
export async function readState(reader: StoreReader): Promise<StateRow> {
  const row = await reader.get<StateRow>('SELECT * FROM gitops_state WHERE id = ?', [STATE]);
  return row ?? ({} as StateRow);
}

/**
 * One sync at a time across masters: a claim on the state row, taken by a conditional update
 * (the store's claim primitive), held by each sync's unit of work, released at its end.
 */
export class SyncClaims {
  constructor(
    private readonly store: Store,
    /** This master's id: the owner of the claims it takes. */
    private readonly masterId: string,
    private readonly logger: Logger,
    private readonly now: () => Date,
  ) {}

  /** Takes the claim (`changes === 1` won it); a ConflictError naming who syncs where since when. */
  async take(by: string): Promise<Claim> {
    const now = this.now();
    const claim = { owner: this.masterId, startedAt: now.toISOString() };
    const claimed = await this.store.run(
      `UPDATE gitops_state SET sync_owner = ?, sync_by = ?, sync_started_at = ?, sync_until = ?
       WHERE id = ? AND (sync_owner IS NULL OR sync_until < ?)`,
      [claim.owner, by, claim.startedAt, now.getTime() + CLAIM_MS, STATE, now.getTime()],
    );
    if (claimed.changes === 1) return claim;
    const row = await readState(this.store);
    throw new ConflictError(
      `a GitOps sync is in progress (started by ${row.sync_by || 'someone'} on master ${row.sync_owner} at ${row.sync_started_at}); try again once it ended`,
      { details: { master: row.sync_owner, by: row.sync_by, since: row.sync_started_at } },
    );
  }

  /**
   * The fence of a sync's writes, first in its unit: refused when its claim lapsed (CLAIM_MS) and
   * another sync took the row. On PostgreSQL it also locks the row until the unit ends, so no
   * other master's claim lands between this check and the commit.
   */
  async hold(tx: StoreTransaction, claim: Claim): Promise<void> {
    const held = await tx.run(
      'UPDATE gitops_state SET sync_until = sync_until WHERE id = ? AND sync_owner = ? AND sync_started_at = ?',
      [STATE, claim.owner, claim.startedAt],
    );
    if (held.changes === 1) return;
    throw new ConflictError(
      `the claim of this GitOps sync (master ${claim.owner}, since ${claim.startedAt}) lapsed and another sync took it; nothing was applied`,
    );
  }

  /** Ends the claim, if it is still this sync's (a lapsed one may be another's by now). */
  async release(claim: Claim): Promise<void> {
    await this.store
      .run(
        'UPDATE gitops_state SET sync_owner = NULL, sync_until = NULL WHERE id = ? AND sync_owner = ? AND sync_started_at = ?',
        [STATE, claim.owner, claim.startedAt],
      )
      .catch((error: Error) => this.logger.warn(`releasing the GitOps sync claim failed: ${error.message}`));
  }

  /** Frees the claim of a master that died during a sync (told by the cluster). */
  async releaseOf(masterId: string): Promise<void> {
    await this.store.run('UPDATE gitops_state SET sync_owner = NULL, sync_until = NULL WHERE sync_owner = ?', [
      masterId,
    ]);
  }
}
