"""Present only the file tools, and remind the model of the data policy."""

ALLOWED_TOOLS = {"fs_read", "fs_write"}
REMINDER = "Never copy customer data into tool arguments."


def transform(payload):
    request = payload["request"]
    return {
        **request,
        "system": request["system"] + "\n\n" + REMINDER,
        "tools": [tool for tool in request["tools"] if tool["name"] in ALLOWED_TOOLS],
    }
