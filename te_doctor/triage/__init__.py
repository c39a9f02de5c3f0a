"""Bug-report triage: diagnose a machine from text someone pasted."""
