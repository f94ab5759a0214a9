// want: output opaque is secure
param opaque string

@secure()
output opaque string = opaque
