"""The binary front end: ModelProto to the IR (`read`), and the IR back to protobuf (`write`)."""
