"""The demo: the workbench's whole workflow on a collection and its report sections (``workbench demo``)."""
