/**
 * Events on NATS JetStream. Postgres is the source of truth: a producer writes each event to its
 * outbox table in the same transaction as its state change (`enqueueEvent`), and the relay
 * publishes it with `Nats-Msg-Id` = event id, so NATS being down delays events but loses none.
 * Consumers are durable, ack explicitly and record each applied event in an inbox table in the same
 * transaction as its effect, so a redelivery changes nothing. Under load a consumer applies the
 * messages that piled up meanwhile together in one transaction (group commit), so a handler's
 * transaction may hold other events' effects too. Poison messages are terminated and kept in
 * `dead_letters`, never retried forever or dropped silently. With tracing on, an event stays in the trace
 * of the work that wrote it: the row keeps that context, the relay's publish is a producer span in it, and
 * each consumer's handling a consumer span under the publish (W3C headers on the message).
 *
 * By job: subjects.ts (the stream and subject names), connection.ts (connecting, the stream), outbox.ts
 * (writing events), relay.ts (publishing them), consumer.ts (applying them once).
 */

export * from "./events/connection.js";
export * from "./events/consumer.js";
export * from "./events/outbox.js";
export * from "./events/relay.js";
export * from "./events/subjects.js";
