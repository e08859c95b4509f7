-- AlterTable
ALTER TABLE "UsageEventItem" ADD COLUMN     "creditUnits" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "AccessCreditUnitsUsage" (
    "accessId" TEXT NOT NULL,
    "periodStart" TIMESTAMP(3) NOT NULL,
    "unitsUsed" BIGINT NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "AccessCreditUnitsUsage_pkey" PRIMARY KEY ("accessId","periodStart")
);

-- AddForeignKey
ALTER TABLE "AccessCreditUnitsUsage" ADD CONSTRAINT "AccessCreditUnitsUsage_accessId_fkey" FOREIGN KEY ("accessId") REFERENCES "Access"("id") ON DELETE CASCADE ON UPDATE CASCADE;
