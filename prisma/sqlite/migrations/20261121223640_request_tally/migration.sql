-- CreateTable
CREATE TABLE "RequestTally" (
    "sellerId" TEXT NOT NULL,
    "minute" DATETIME NOT NULL,
    "sandbox" BOOLEAN NOT NULL,
    "lifecycle" TEXT NOT NULL,
    "count" INTEGER NOT NULL,

    PRIMARY KEY ("sellerId", "minute", "sandbox", "lifecycle"),
    CONSTRAINT "RequestTally_sellerId_fkey" FOREIGN KEY ("sellerId") REFERENCES "Seller" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
