-- DropIndex
DROP INDEX "AccountWrite_claimedBy_idx";

-- DropIndex
DROP INDEX "AccountWrite_status_claimedUntil_idx";

-- DropIndex
DROP INDEX "AccountWrite_status_nextAttemptAt_idx";

-- CreateIndex
CREATE INDEX "AccountWrite_due_idx" ON "AccountWrite"("nextAttemptAt") WHERE "status" = 'pending';

-- CreateIndex
CREATE INDEX "AccountWrite_lease_idx" ON "AccountWrite"("claimedUntil") WHERE "status" = 'delivering';
