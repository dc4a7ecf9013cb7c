-- The example order services' table (docs/http-idempotency.md), read and run at start by
-- clients/python/examples/http_orders.py and clients/node/src/http/example-orders.ts after they
-- create schema shop when it is missing. One row per order; idempotency_key names the Idem key
-- whose atomic phase inserted it.
CREATE TABLE IF NOT EXISTS shop.orders (
    id bigserial PRIMARY KEY,
    order_id text NOT NULL,
    amount_cents bigint NOT NULL,
    currency text NOT NULL,
    idempotency_key text,
    created_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE shop.orders ADD COLUMN IF NOT EXISTS order_id text;
