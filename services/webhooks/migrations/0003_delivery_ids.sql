-- Delivery ids are time-ordered (UUID version 7, RFC 9562), as executions' and events' ids are
-- (@toolport/kit/ids): a delivery is written for every event a webhook subscribes to, and a random id put
-- each insert on a random page of the primary key, which once the table is large costs a page read and,
-- after each checkpoint, a whole page in the WAL. A delivery id is still an opaque UUID to its receiver
-- (X-Svc-Delivery), unique as before.
-- Postgres 15 has no uuidv7(): this takes gen_random_uuid()'s random bits and variant, puts the time in
-- milliseconds (now, or `at`) in its first 48 bits and 7 in its version.
CREATE FUNCTION uuid_v7(at timestamptz DEFAULT clock_timestamp()) RETURNS uuid LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT encode(set_byte(b, 6, (get_byte(b, 6) & 15) | 112), 'hex')::uuid
    FROM (SELECT overlay(uuid_send(gen_random_uuid())
                         PLACING substring(int8send(floor(extract(epoch FROM at) * 1000)::bigint) FROM 3)
                         FROM 1 FOR 6) AS b) AS r
$$;
