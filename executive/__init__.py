"""executive package."""
