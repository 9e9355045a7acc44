from loader import tool

SCHEMA = {
    "type": "object",
    "properties": {
        "region": {
            "type": "string",
            "description": "Mirrored into the Mcp-Param-Region header",
            "x-mcp-header": "Region",
        }
    },
}


@tool(input_schema=SCHEMA)
def test_x_mcp_header(region: str = "<none>") -> str:
    """A parameter a client mirrors into an HTTP header (SEP-2243), which the server checks."""
    return f"region={region}"
