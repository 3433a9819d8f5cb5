"""Rule metadata and declarative policies shipped with pmanifest (a data package)."""
