# Merge a sharded sweep with polars: python merge_polars.py OUT
import sys

import polars as pl

out = sys.argv[1]
rows = (
    pl.scan_parquet(f"{out}/sessions/*/*.parquet", hive_partitioning=True)
    .sort("ordinal", "config")
    .collect()
)
rows.drop("ordinal", "shard").write_parquet(f"{out}/sessions-polars.parquet")
configs = (
    rows.group_by("config", "config_label")
    .agg(
        pl.len().alias("sessions"),
        pl.col("price", "tokens_sent", "results_mangled", "needed_again").sum(),
        pl.col("peak_tokens").max(),
    )
    .sort("config")
)
configs.write_csv(f"{out}/configs-polars.csv")
print(configs.sort("price").head(10))
