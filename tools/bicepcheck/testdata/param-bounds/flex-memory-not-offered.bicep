// want: @allowed holds 1024, which Azure does not offer
@allowed([
  1024
  2048
])
param flexInstanceMemoryMB int = 2048
