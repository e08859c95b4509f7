-- CreateTable
CREATE TABLE "SellerStat" (
    "sellerId" TEXT NOT NULL,
    "grain" TEXT NOT NULL,
    "bucket" INTEGER NOT NULL,
    "calls" INTEGER NOT NULL DEFAULT 0,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "transactions" INTEGER NOT NULL DEFAULT 0,
    "revenueMicros" BIGINT NOT NULL DEFAULT 0,
    "newWallets" INTEGER NOT NULL DEFAULT 0,

    PRIMARY KEY ("sellerId", "grain", "bucket"),
    CONSTRAINT "SellerStat_sellerId_fkey" FOREIGN KEY ("sellerId") REFERENCES "Seller" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "SellerWallet" (
    "sellerId" TEXT NOT NULL,
    "wallet" TEXT NOT NULL,
    "firstPaidAt" DATETIME NOT NULL,

    PRIMARY KEY ("sellerId", "wallet"),
    CONSTRAINT "SellerWallet_sellerId_fkey" FOREIGN KEY ("sellerId") REFERENCES "Seller" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "PageViewStat" (
    "sellerId" TEXT NOT NULL,
    "grain" TEXT NOT NULL,
    "bucket" INTEGER NOT NULL,
    "views" INTEGER NOT NULL DEFAULT 0,
    "human" INTEGER NOT NULL DEFAULT 0,
    "agent" INTEGER NOT NULL DEFAULT 0,
    "crawler" INTEGER NOT NULL DEFAULT 0,
    "unknown" INTEGER NOT NULL DEFAULT 0,
    "markdown" INTEGER NOT NULL DEFAULT 0,

    PRIMARY KEY ("sellerId", "grain", "bucket"),
    CONSTRAINT "PageViewStat_sellerId_fkey" FOREIGN KEY ("sellerId") REFERENCES "Seller" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "PageViewTally" (
    "sellerId" TEXT NOT NULL,
    "dimension" TEXT NOT NULL,
    "grain" TEXT NOT NULL,
    "start" INTEGER NOT NULL,
    "value" TEXT NOT NULL,
    "views" INTEGER NOT NULL,

    PRIMARY KEY ("sellerId", "dimension", "grain", "start", "value"),
    CONSTRAINT "PageViewTally_sellerId_fkey" FOREIGN KEY ("sellerId") REFERENCES "Seller" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
