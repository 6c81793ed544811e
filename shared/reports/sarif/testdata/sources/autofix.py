import sys

inputs = {}
for x in range(5):
  inputs[x] = 1
  if inputs[x + 1] == True:
    exit(1)
