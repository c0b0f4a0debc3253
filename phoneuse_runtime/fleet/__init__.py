"""A fleet of runtimes, one per phone, behind one gRPC door (nginx): see fleet.py."""
