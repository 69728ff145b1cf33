"""Plain Python, no Beam: the parts of `pipeline` that run without it (log formats, the audit of a
batch of lines, DNS resolvers, the HTTPS client, history sources and the captures folder, range
downloads, schemas, charts, terminal output). Graph code imports them; they never import Beam,
directly or through another module (tests/test_layering.py keeps it so)."""
