# The settings docs/PERFORMANCE.md's scale model calls "tuned": what 40,000 Avro files a minute
# (~3,500 events each, one table partitioned by day and tenant) takes. They are the module's
# defaults but for the objects' size (0.61 MB, which sizes the writers at 1984 MB instead of the
# default's 2048) and the landing expiry; this file pins them. tests/bench/model.py reads them
# from here, so the model prices exactly what this deploys:
#
#   make deploy TF_VARS="-var-file=at-scale.tfvars"
#
# The model prices exact dedup on the key `event_time, event_id`, which compaction's key index
# confines to the files of the same minutes (docs/ARCHITECTURE.md, "The dedup key index"). A
# dedup window (table property floe.dedup-window-ms, the model's DEDUP_WINDOW_S) costs less
# again; it is a choice about your data (two copies committed further apart both stay), so it is
# not set here.

# A writer takes up to 1000 notifications a batch, gathered for at most 5 s: each batch writes one
# Parquet file per tenant for 100 times the rows, instead of 100 small files per 10 objects.
writer_batch_size              = 1000
writer_batching_window_seconds = 5
# The landing objects' size (3,500 events of ~174 bytes): sizes the writers at ~2 GB.
expected_object_mb = 0.61
# One full vCPU for the committer.
committer_memory_mb = 1769
# Shares of 6 tasks end within the 5-minute tick (~0.4 of it at noon); 200 invocations run every
# share of a tick of the model's one table (the budget is shared by all of compact_tables: scale
# it with them).
compactor_max_tasks       = 6
compactor_max_invocations = 200
# Landed Avro objects are kept 15 days, the least that outlives their notifications (~525 TB
# at this rate, $12,000 a month at S3 Standard's list price; 30 days doubles it); the ledger's
# records then live 15 + 15 + 7 = 37 days.
landing_expiration_days = 15
