"""Test helpers for the frame codec: the vector reader and the differential oracle."""
