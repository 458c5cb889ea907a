"""What a prompt offers and does besides asking the model, the same in every
front-end: slash commands (built-in, session and custom), @ mentions, completion,
undo and redo of a turn, export of a transcript."""
