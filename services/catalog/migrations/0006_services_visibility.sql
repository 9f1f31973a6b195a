-- Every catalog read filters services by who sees them (visibility, then the reader's organization, which
-- services_organization serves). Without an index on visibility each read scanned the whole table: at
-- 2,300 services, 9.6 ms of a registration's 30 ms starter-tools statement, against 0.5 ms with it.
CREATE INDEX services_visibility ON services (visibility);
