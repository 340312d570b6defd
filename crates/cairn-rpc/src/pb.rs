//! Placeholder: the protobuf messages arrive in the next commit.
