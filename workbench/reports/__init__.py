"""Renderers: result values to tables, JSON, long-form rows and charts, one module per report. The only place numbers are rounded."""
