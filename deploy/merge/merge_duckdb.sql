-- Merge a sharded sweep with DuckDB, inside the --out folder: duckdb < merge_duckdb.sql
COPY (
  SELECT * EXCLUDE (shard)
  FROM read_parquet('sessions/*/*.parquet', hive_partitioning = true)
  ORDER BY ordinal, config
) TO 'sessions-duckdb.parquet' (FORMAT parquet);
COPY (
  SELECT config, config_label, count(*) AS sessions,
         sum(price) AS price, sum(tokens_sent) AS tokens_sent,
         sum(results_mangled) AS results_mangled, sum(needed_again) AS needed_again,
         max(peak_tokens) AS peak_tokens
  FROM read_parquet('sessions/*/*.parquet', hive_partitioning = true)
  GROUP BY config, config_label
  ORDER BY config
) TO 'configs-duckdb.csv' (HEADER);
