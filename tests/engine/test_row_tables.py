"""sweep/row_tables.concat joins tables as pyarrow's permissive concat does, faster where the
schemas agree."""

import pyarrow as pa

from sweep.row_tables import concat


def test_one_schema_and_unified_schemas_give_the_permissive_result():
    a = pa.table({"cell_index": [0, 0], "utility": [1.5, 2.0]})
    b = pa.table({"cell_index": [1], "utility": [3.0]})
    nulls = pa.table({"cell_index": [2], "utility": pa.nulls(1)})  # a column all null: type null
    for tables in ([a, b], [a, nulls, b], [nulls, a]):
        joined = concat(tables)
        assert joined.equals(pa.concat_tables(tables, promote_options="permissive"))
        assert joined.schema.field("utility").type == pa.float64()
    assert concat([a]) is a
