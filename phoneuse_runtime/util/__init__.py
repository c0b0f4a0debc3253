"""Small helpers with no knowledge of calls, phones or front ends.

Crash-safe files, where the running server is, whether an address can be listened on, child
processes, background tasks, text made safe to print, phone numbers, picking by name, and a
device's name in a fleet. Nothing here imports another room of the package.
"""
