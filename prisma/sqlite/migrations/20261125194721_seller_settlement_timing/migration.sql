-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Seller" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "organizationId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "upstreamBaseUrl" TEXT NOT NULL,
    "accessEndpointUrl" TEXT,
    "salesEnabled" BOOLEAN NOT NULL DEFAULT false,
    "servicingEnabled" BOOLEAN NOT NULL DEFAULT false,
    "stateful" BOOLEAN NOT NULL DEFAULT false,
    "accountWriteVariant" TEXT NOT NULL DEFAULT 'original',
    "payToAddress" TEXT,
    "networksJson" TEXT NOT NULL DEFAULT '[]',
    "sandbox" BOOLEAN NOT NULL DEFAULT false,
    "settlement" TEXT NOT NULL DEFAULT 'before_response',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Seller_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Seller" ("accessEndpointUrl", "accountWriteVariant", "createdAt", "id", "name", "networksJson", "organizationId", "payToAddress", "salesEnabled", "sandbox", "servicingEnabled", "slug", "stateful", "updatedAt", "upstreamBaseUrl") SELECT "accessEndpointUrl", "accountWriteVariant", "createdAt", "id", "name", "networksJson", "organizationId", "payToAddress", "salesEnabled", "sandbox", "servicingEnabled", "slug", "stateful", "updatedAt", "upstreamBaseUrl" FROM "Seller";
DROP TABLE "Seller";
ALTER TABLE "new_Seller" RENAME TO "Seller";
CREATE UNIQUE INDEX "Seller_slug_key" ON "Seller"("slug");
CREATE INDEX "Seller_organizationId_idx" ON "Seller"("organizationId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
