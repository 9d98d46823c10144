"""Repair rounds of `tm ask`: which blocked proposals go back to the model (`triage`), the
follow-up message that tells it exactly what was wrong (`followup`), and how the answer's
proposals are tied to the ones they repair (`chain`)."""
