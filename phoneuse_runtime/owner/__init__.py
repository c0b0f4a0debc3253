"""The owner's controls and approvals: what the agent may never touch, and holds only the owner answers.

The controls (the owner's apps and screens), the phone-side front guard, the masking of secrets
kept on disk, holds (approvals), the store the terminal answers them through, the text the owner
reads before answering, and the `approvals` command.
"""
