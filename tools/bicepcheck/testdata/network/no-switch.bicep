// want: no file declares param vnetEnabled
param location string
