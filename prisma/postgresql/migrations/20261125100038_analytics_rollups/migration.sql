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

    CONSTRAINT "SellerStat_pkey" PRIMARY KEY ("sellerId","grain","bucket")
);

-- CreateTable
CREATE TABLE "SellerWallet" (
    "sellerId" TEXT NOT NULL,
    "wallet" TEXT NOT NULL,
    "firstPaidAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SellerWallet_pkey" PRIMARY KEY ("sellerId","wallet")
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

    CONSTRAINT "PageViewStat_pkey" PRIMARY KEY ("sellerId","grain","bucket")
);

-- CreateTable
CREATE TABLE "PageViewTally" (
    "sellerId" TEXT NOT NULL,
    "dimension" TEXT NOT NULL,
    "grain" TEXT NOT NULL,
    "start" INTEGER NOT NULL,
    "value" TEXT NOT NULL,
    "views" INTEGER NOT NULL,

    CONSTRAINT "PageViewTally_pkey" PRIMARY KEY ("sellerId","dimension","grain","start","value")
);

-- AddForeignKey
ALTER TABLE "SellerStat" ADD CONSTRAINT "SellerStat_sellerId_fkey" FOREIGN KEY ("sellerId") REFERENCES "Seller"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SellerWallet" ADD CONSTRAINT "SellerWallet_sellerId_fkey" FOREIGN KEY ("sellerId") REFERENCES "Seller"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PageViewStat" ADD CONSTRAINT "PageViewStat_sellerId_fkey" FOREIGN KEY ("sellerId") REFERENCES "Seller"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PageViewTally" ADD CONSTRAINT "PageViewTally_sellerId_fkey" FOREIGN KEY ("sellerId") REFERENCES "Seller"("id") ON DELETE CASCADE ON UPDATE CASCADE;
