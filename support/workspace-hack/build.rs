// A build script, so that cargo also unifies the features of the build dependencies.
fn main() {}
