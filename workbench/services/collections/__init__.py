"""Collections and formats in: ingest folders and files, convert raw collections, metadata, chunking."""
